"""Every command of the shell and the lab language, by name."""

from shell.commands.base import Command
from shell.commands.cluster import CLUSTER_COMMANDS
from shell.commands.data import DATA_COMMANDS
from shell.commands.describe import DESCRIBE_COMMANDS
from shell.commands.faults import FAULT_COMMANDS
from shell.commands.meta import META
from shell.commands.navigation import NAVIGATION
from shell.commands.operations import OPERATIONS
from shell.commands.transactions import TRANSACTION_COMMANDS

COMMANDS: dict[str, Command] = {
    command.name: command
    for command in (*NAVIGATION, *META, *CLUSTER_COMMANDS, *DESCRIBE_COMMANDS, *OPERATIONS,
                    *DATA_COMMANDS, *TRANSACTION_COMMANDS, *FAULT_COMMANDS)
}
"""Every command by name."""

__all__ = ["COMMANDS", "Command"]
