"""The backends the lowering's tests run on."""
import pytest


@pytest.fixture(params=["numba", "lowered"])
def backend(request, monkeypatch):
    """numba (the default path), or the Python backend running the same lowered code
    (``ADCOMPILE_FUSE=all``). A test parametrizing ``backend`` itself overrides this."""
    if request.param == "lowered":
        monkeypatch.setenv("ADCOMPILE_FUSE", "all")
        return "python"
    monkeypatch.delenv("ADCOMPILE_FUSE", raising=False)
    return "numba"
