"""The command line's errors as Python exceptions, one class per exit code, carrying its messages."""


class MoesimError(Exception):
    """An error the command line reports with a non-zero exit code.

    ``message`` is what `moesim` prints on stderr without its ``moesim: <kind>:`` header (file, JSON pointer, what
    was expected, a did-you-mean); ``lines`` holds it line by line; ``exit_code`` is the CLI's.
    """

    exit_code = 4

    def __init__(self, message, args=None):
        super().__init__(message)
        self.message = message
        self.lines = [line for line in message.splitlines() if line.strip()]
        self.command = list(args or [])


class UsageError(MoesimError, ValueError):
    """Exit 1: an unknown flag or keyword, a malformed value, an option the subcommand lacks."""

    exit_code = 1


class BadInput(MoesimError, ValueError):
    """Exit 2: an unknown catalog name, an unreadable or malformed file, invalid model, system or layout fields."""

    exit_code = 2


class InfeasibleLayout(MoesimError):
    """Exit 3: the layout cannot run; ``reasons`` lists every reason (sizes that do not divide, memory, ...)."""

    exit_code = 3

    @property
    def reasons(self):
        return self.lines


class InternalError(MoesimError, RuntimeError):
    """Exit 4: a bug in moesim."""

    exit_code = 4


BY_EXIT_CODE = {1: UsageError, 2: BadInput, 3: InfeasibleLayout, 4: InternalError}
