"""PySpark's Python daemon for a local session, started with ``-m experiments.spark_daemon``.

Spark starts one daemon per session (``spark.python.daemon.module``), which
forks the Python workers. Spark puts its own ``pyspark.zip`` first on the
daemon's path, and a zip holds no compiled bytecode: the daemon compiled
pyspark from source at every session start (0.69 s to import, 0.12 s from
the installed package), and each worker compiled again the modules it
imports after its fork (the worker, its Arrow serializers). In a local
session the driver's interpreter runs the workers, and its installed pyspark
(the same package the zip came from, compiled at install) serves them, so
this daemon takes Spark's zips off its path first.

Before it forks a worker it also imports kraftsim's task code
(:mod:`experiments.tasks` and every experiment), so each worker inherits it
instead of importing it again. Those modules start no thread (a fork must
not copy one); pyarrow and pandas, which do, are still imported by each
worker after its fork, as PySpark's daemon requires.

Only local sessions use it (:func:`experiments.spark_env.spark_conf_pairs`):
a cluster's workers run the pyspark that came with their Spark.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable


def without_spark_zips(path: Iterable[str]) -> list[str]:
    """``path`` less the pyspark and py4j zips that Spark puts first on a worker's path."""
    def spark_zip(entry: str) -> bool:
        name = entry.replace("\\", "/").rsplit("/", 1)[-1]
        return name == "pyspark.zip" or (name.startswith("py4j-") and name.endswith(".zip"))
    return [entry for entry in path if not spark_zip(entry)]


def main() -> None:
    """Run PySpark's daemon from the installed pyspark, kraftsim's task code loaded."""
    sys.path[:] = without_spark_zips(sys.path)
    from pyspark import daemon

    import experiments.tasks  # noqa: F401  (inherited by every forked worker)
    from experiments.registry import EXPERIMENTS  # noqa: F401  (imports every experiment)

    daemon.manager()


if __name__ == "__main__":
    main()
