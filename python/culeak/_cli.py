"""The commands a pip install of culeak puts on PATH: culeak itself (the static CLI the wheel
carries in culeak/bin) and culeak-gdb-script (the path of a gdb script that loads the plugin)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    """culeak: the CLI, with the arguments given."""
    exe = os.path.join(HERE, "bin", "culeak")
    os.execv(exe, [exe] + sys.argv[1:])


def gdb_script():
    """culeak-gdb-script: prints the path of a script for gdb or cuda-gdb (`source PATH`, or
    `gdb -x PATH`) that loads the plugin from this installation. The script names the plugin's
    folder, which is known only once installed: it is written beside the plugin, or in the
    user's cache folder when the installation is read-only."""
    plugin_dir = os.path.join(HERE, "gdb")
    with open(os.path.join(plugin_dir, "culeak.gdb.in")) as f:
        text = f.read().replace("@PLUGIN_DIR@", plugin_dir)
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                         "culeak")
    for folder in (plugin_dir, cache):
        path = os.path.join(folder, "culeak.gdb")
        try:
            os.makedirs(folder, exist_ok=True)
            if not os.path.exists(path) or open(path).read() != text:
                with open(path, "w") as f:
                    f.write(text)
        except OSError:
            continue
        print(path)
        return
    sys.exit("culeak-gdb-script: cannot write the script beside %s or in %s" % (plugin_dir, cache))
