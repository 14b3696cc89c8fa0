"""The sweep: bad inputs and faults, each with the refusal it must get (see cases.py)."""
