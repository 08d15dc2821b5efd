"""Import Data-Juicer ops with missing optional deps stubbed (aiohttp etc.)."""
import sys, importlib.abc, importlib.machinery, types
from unittest.mock import MagicMock

STUBBED = []
import os
STUB_ROOTS = set(filter(None, os.environ.get("DJ_STUBS", "aiohttp").split(",")))

class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        m = MagicMock(name=spec.name)
        m.__path__ = []
        m.__spec__ = spec
        m.__name__ = spec.name
        return m
    def exec_module(self, module):
        pass

class _StubFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        for f in sys.meta_path:
            if f is self:
                continue
            try:
                s = f.find_spec(name, path, target)
            except Exception:
                s = None
            if s is not None:
                return None
        if name.split(".")[0] not in STUB_ROOTS:
            return None
        STUBBED.append(name)
        return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)

sys.meta_path.append(_StubFinder())

# Never let Data-Juicer's LazyLoader pip-install anything from these scripts.
from data_juicer.utils import lazy_loader as _ll

def _no_install(cls, package_spec, pip_args=None):
    raise RuntimeError(f"harness: refusing to install {package_spec}")

_ll.LazyLoader._install_package = classmethod(_no_install)
