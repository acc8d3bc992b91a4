"""The package's import graph has no circle, counting imports made inside functions (lint-imports checks the
layers; a circle between two modules of one layer, or inside a subpackage, would slip past it)."""

from __future__ import annotations

import grimp


def test_no_module_of_rag_imports_one_that_imports_it_back():
    graph = grimp.build_graph("rag", exclude_type_checking_imports=True)
    circles = sorted(
        (module, imported)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(importer=imported, imported=module)
    )
    assert circles == []
