"""Layer 8: the web edge — a FastAPI JSON API and the page that uses it (``fabricplan serve``).

:func:`fabricplan.web.app.create_app` builds an app; :mod:`fabricplan.web.operation` holds what
each route computes (the CLI's library calls), :mod:`fabricplan.web.schema` the request and response
bodies, :mod:`fabricplan.web.limit` the server's limits, :mod:`fabricplan.web.job` the background
jobs. FastAPI and uvicorn are imported only inside this package.
"""
