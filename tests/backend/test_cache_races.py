"""Two processes adding entries to one numba cache at the same time (``backend/numba_cache.py``).

numba numbers a new entry's data file from the index it loaded: two processes that each compile
a new signature of one function both write ``<name>.1.nbc``, and the index left behind may name
one signature with the other's machine code. adcompile's data files hold their key, so such an
entry is a cache miss (compiled again), never another signature's code.
"""
import os

from adcompile.backend.numba_cache import GatedCacheFile


def _cache_file(root):
    folder = root / "__pycache__"
    folder.mkdir(mode=0o700)
    return GatedCacheFile(root, str(folder), "f-1.py311", ("stamp", 1))


def test_an_index_naming_another_keys_data_is_a_miss_not_that_code(tmp_path):
    os.chmod(tmp_path, 0o700)
    first = _cache_file(tmp_path)
    first.save(("float64 signature",), "machine code for float64")
    # the second process loaded the index before the first saved: it numbers its entry 1 too
    second = GatedCacheFile(tmp_path, first._cache_path, "f-1.py311", ("stamp", 1))
    second._save_index({("float32 signature",): first._data_name(1)})
    assert second.load(("float32 signature",)) is None
    # an entry whose data is its own still loads
    second.save(("float32 signature",), "machine code for float32")
    assert second.load(("float32 signature",)) == "machine code for float32"
    assert first.load(("float64 signature",)) is None  # its data was overwritten: a miss
