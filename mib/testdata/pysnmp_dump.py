# Prints, as JSON, what pysnmp's compiled copies of the IETF MIB modules
# say of each object named on stdin ("MODULE name" lines): its OID, its
# kind, its syntax's class and its named numbers. builtin_test.go compares
# the built-in table with it. Argument: the directory of pysnmp_mibs.
import json
import sys

from pysnmp.smi import builder

mb = builder.MibBuilder()
mb.addMibSources(builder.DirMibSource(sys.argv[1]))
out = []
for line in sys.stdin:
    mod, name = line.split()
    mb.loadModules(mod)
    (sym,) = mb.importSymbols(mod, name)
    rec = {"module": mod, "name": name, "oid": ".".join(map(str, sym.getName())),
           "class": type(sym).__name__, "syntax": "", "enums": {}}
    syn = sym.getSyntax() if hasattr(sym, "getSyntax") else None
    if syn is not None and type(sym).__name__ in ("MibScalar", "MibTableColumn"):
        rec["syntax"] = type(syn).__name__
        nv = getattr(syn, "namedValues", None)
        if nv:
            rec["enums"] = {k: int(v) for k, v in nv.items()}
    out.append(rec)
json.dump(out, sys.stdout)
