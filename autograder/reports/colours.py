"""One colour per module, the same in the PNG charts and on the HTML page: the
assignment's modules in order, its optional credit apart, anything else grey."""
from autograder import active_assignment

PALETTE = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974")
OPTIONAL = "#8172B3"
OTHER = "#777777"


def key(module):
    """The CSS class suffix of ``module``: its position, ``opt`` or ``other``."""
    assignment = active_assignment.current()
    if module in assignment.modules and assignment.modules.index(module) < len(PALETTE):
        return str(assignment.modules.index(module))
    return "opt" if module and module == assignment.optional_module else "other"


def colour(module):
    found = key(module)
    return PALETTE[int(found)] if found.isdigit() else OPTIONAL if found == "opt" else OTHER


def css():
    """The ``.m-<key>`` rules of the HTML pages."""
    rules = [f".m-{index} {{ background: {value} !important; }}" for index, value in enumerate(PALETTE)]
    return "\n".join(rules + [f".m-opt {{ background: {OPTIONAL} !important; }}",
                              f".m-other {{ background: {OTHER} !important; }}"])
