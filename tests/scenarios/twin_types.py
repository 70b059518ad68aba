"""Scenario: two classes that share a bare name (Widget) in two modules, as inspect.Parameter and
torch.nn.parameter.Parameter do, an instance of each held by a global; a bare `refs --type
Widget` names both types and asks for one.

Prints one JSON line (each instance's id and its type's qualified name), then READY."""
import json
import sys
import time
import types

shop = types.ModuleType("shop")
exec("class Widget:\n    pass\n", shop.__dict__)
garage = types.ModuleType("garage")
exec("class Widget:\n    pass\n", garage.__dict__)
sys.modules["shop"], sys.modules["garage"] = shop, garage
mine = shop.Widget()
yours = garage.Widget()
print(json.dumps({"widgets": {"shop.Widget": id(mine), "garage.Widget": id(yours)}}), flush=True)
print("READY", flush=True)
time.sleep(600)
