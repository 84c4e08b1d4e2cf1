"""What every page and report of the similarity check shows alike: where the pages
are, which file names are ours, how a score is written."""
import math
import re

OUTPUT_FOLDER = "similarity"
RESULT_NAME = "similarity.json"
PAGE_NAME = re.compile(r"[a-z_]+-(torch-|ref-)?[0-9]{1,4}\.html")


def shown_score(value):
    """A score with two decimals, never rounded up onto a threshold (0.8967 is 0.89), so
    that a shown score is at or above a shown threshold exactly when it is flagged."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return "?"
    return f"{math.floor(round(value * 100, 6)) / 100:.2f}"
