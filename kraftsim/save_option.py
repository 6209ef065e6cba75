"""``--save DIR``: write a run's disks in Kafka's layout, with one-line errors."""

from __future__ import annotations

import sys

from kafka_format.errors import EncodeError
from sim.save import save_simulation
from sim.world import Simulation


def save_run(sim: Simulation, directory: str) -> bool:
    """Write every node's log and snapshots under ``directory``; False (and a line) on error."""
    try:
        nodes = save_simulation(sim, directory)
    except (OSError, FileExistsError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"kraftsim: --save: cannot write {directory}: {reason}", file=sys.stderr)
        return False
    except EncodeError as exc:
        print(f"kraftsim: --save: cannot write {directory} in Kafka's format: {exc}",
              file=sys.stderr)
        return False
    print(f"saved {len(nodes)} nodes' logs and snapshots in Kafka's layout under {directory}",
          file=sys.stderr)
    return True
