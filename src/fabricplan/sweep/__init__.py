"""Sweeps: many scenarios at once, on every core or on a Ray cluster, results as Parquet.

- :mod:`~fabricplan.sweep.vary` parses ``--vary KEY=VALUES`` and points files,
- :mod:`~fabricplan.sweep.grid` builds and validates the grid's points and their seeds,
- :mod:`~fabricplan.sweep.point` evaluates one point into rows,
- :mod:`~fabricplan.sweep.store` reads and writes the results file (pyarrow, atomically),
- :mod:`~fabricplan.sweep.runner` runs the points in this process or a local process pool,
  writing as it goes and resuming what a file already holds,
- :mod:`~fabricplan.sweep.ray_runner` runs them on Ray (the only module importing it).
"""
