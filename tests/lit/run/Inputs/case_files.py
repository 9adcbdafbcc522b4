"""Writes the conformance-format files (../shared/conformance/FORMAT.md) of the lit generators' cases."""
import json
import os


def write_index(root, cases):
    """ROOT/index.json listing CASES (their index entries)."""
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump({"format": "ptx-conformance-1", "cases": cases}, f, indent=1)


def write_single_case(root, name, case, min_sm=100, ptx_version="8.7", target="sm_100a"):
    """ROOT/NAME/case.json holding CASE, and an index of that one case."""
    with open(os.path.join(root, name, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
    write_index(root, [{"name": case["name"], "dir": name, "min_sm": min_sm, "ptx_version": ptx_version,
                        "target": target, "description": case["description"]}])
