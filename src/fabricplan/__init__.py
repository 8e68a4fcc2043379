"""fabricplan: plan GPU-cluster networks — InfiniBand or RoCE — from the user's own numbers.

The public API is small and pinned by ``tests/test_public_api.py``:

>>> import fabricplan
>>> fabricplan.__version__
'0.1.0'
"""

from fabricplan.errors import FabricPlanError

__version__ = "0.1.0"

__all__ = ["FabricPlanError", "__version__"]
