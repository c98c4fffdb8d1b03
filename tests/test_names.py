"""One name, one meaning (shared/ARCHITECTURE.md's Names): a public constant's name holds the
same value in every module of lagassign that has it, whether it was defined there or imported.
(``DEFAULT_LAG_TIMEOUT`` was 3 s in kafka/settings.py and 1 s in kafka/aiokafka.py;
``DEFAULT_HORIZON`` 300 s in rates and 3,600 s in the simulator.)"""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict

import lagassign


def test_a_constant_name_means_one_value_everywhere() -> None:
    values: dict[str, dict[str, str]] = defaultdict(dict)
    modules = [m.name for m in pkgutil.walk_packages(lagassign.__path__, "lagassign.")]
    assert "lagassign.kafka.aiokafka" in modules and "lagassign.spark.pipeline" in modules
    for name in modules:
        module = importlib.import_module(name)
        for key, value in vars(module).items():
            if key.isupper() and not key.startswith("_"):
                values[key][name] = repr(value)
    clashes = {key: where for key, where in values.items() if len(set(where.values())) > 1}
    assert clashes == {}
    assert values["LAG_TIMEOUT_S"] and values["AIOKAFKA_LAG_TIMEOUT_S"]  # (the walk finds them)
