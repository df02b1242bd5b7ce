"""Fixtures of the backend tests."""
import pytest


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A persistent cache folder of this test's own (not made yet)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("ADCOMPILE_CACHE_DIR", str(folder))
    monkeypatch.delenv("ADCOMPILE_DISABLE_CACHE", raising=False)
    return folder
