"""Runs NPF's command line (what .venv/bin/npf runs), with its imports kept out of module scope.

NPF 2.1.1 sets multiprocessing's start method to forkserver, whose server imports the main module
again: through the `npf` script that is every NPF module a second time (about 2 s a run here).
Imported under another name, this file imports nothing.

    .venv/bin/python lab/npf_main.py local --test lab/table-cycles.npf --tags quick
"""
import sys

if __name__ == "__main__":
    from npf.tests.main import main

    sys.exit(main())
