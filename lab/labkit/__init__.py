"""The lab's Python side: runs NPF test files, reads their results, writes the report."""


class LabError(Exception):
    """An experiment did not produce what the report needs."""
