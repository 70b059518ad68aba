/* culeak's own version, for --version, snapshots and the gdb plugin. */
#ifndef CULEAK_UTIL_VERSION_H
#define CULEAK_UTIL_VERSION_H

#define CL_VERSION "0.2.0"

#endif
