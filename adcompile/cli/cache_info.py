"""``adcompile cache [--clear]``: where the compile cache is, its size and its entries."""
import time

from ..backend.cache_folder import NUMBA_SUBFOLDER, cache_location, clear_cache

SHOWN = 20  # most recent generated modules listed


def _size(path):
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def human(size):
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def run(options, out):
    folder, persistent = cache_location()
    if options.clear:
        removed = clear_cache()
        print(f"cleared {folder}: removed {removed} entr{'y' if removed == 1 else 'ies'}", file=out)
        return 0
    modules = sorted((p for p in folder.glob("*.py") if p.is_file()), key=lambda p: p.stat().st_mtime,
                     reverse=True)
    numba_folder = folder / NUMBA_SUBFOLDER
    numba_files = [p for p in numba_folder.iterdir() if p.is_file()] if numba_folder.is_dir() else []
    total = sum(_size(p) for p in modules) + (_size(numba_folder) if numba_folder.is_dir() else 0)
    kind = "persistent" if persistent else "temporary (this process only, no numba disk cache)"
    print(f"cache folder: {folder} ({kind})", file=out)
    print(f"size: {human(total)} in {len(modules)} generated modules and {len(numba_files)} numba "
          "cache files", file=out)
    for path in modules[:SHOWN]:
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
        print(f"  {stamp}  {human(path.stat().st_size):>9}  {path.name}", file=out)
    if len(modules) > SHOWN:
        print(f"  ... and {len(modules) - SHOWN} older", file=out)
    return 0
