"""fabricplan: plan GPU-cluster networks — InfiniBand or RoCE — from the user's own numbers.

The public API is small and pinned by ``tests/test_public_api.py``:

>>> import fabricplan
>>> fabricplan.__version__
'0.1.0'
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fabricplan.errors import FabricPlanError

__version__ = "0.1.0"

__all__ = ["FabricPlanError", "__version__"]


def __getattr__(name: str) -> object:
    """``fabricplan.FabricPlanError``, imported when first asked for: importing the package (as
    the console script does first) runs nothing but this file before the signal handlers."""
    if name == "FabricPlanError":
        from fabricplan.errors import FabricPlanError

        return FabricPlanError
    raise AttributeError(f"module 'fabricplan' has no attribute {name!r}")
