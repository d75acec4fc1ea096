"""ProfileError, the one error type of the reader: its message names the file and the problem."""


class ProfileError(Exception):
    """A profile that cannot be read: the message names the file and the problem."""
