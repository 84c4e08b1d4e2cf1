"""Fill translations into a catalog from a Python file defining ``ZH = {msgid: translation}``.

    python tools/fill_catalog.py autograder/i18n/locale/zh/grader.po translations.py

Only empty entries are filled; existing translations are kept. Prints the ids
still untranslated. (A helper for translators; the catalogs are the source of truth.)
"""
import runpy
import sys

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from autograder.i18n import catalog_tools


def main(po_path, table_path):
    table = runpy.run_path(table_path)["ZH"]
    catalog = catalog_tools.read_catalog(po_path)
    for message in catalog:
        if message.id and not message.string and message.id in table:
            message.string = table[message.id]
    catalog_tools.write_catalog(po_path, catalog)
    left = [message.id for message in catalog if message.id and not message.string]
    for msgid in left:
        print("untranslated:", msgid)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
