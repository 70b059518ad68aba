/* A dump's symbols: modules without files, answering from the recording (symbols.h). */
#ifndef CULEAK_SYMBOLS_REPLAY_H
#define CULEAK_SYMBOLS_REPLAY_H

#include "symbols/symbols.h"

/* The modules and answers of a dump's symbol section p[0..len), for the dump target t; the
 * loading's warnings recorded there are t's again. CL_E_NOT_CORE when it is malformed. */
int cl_symbols_load_recorded(struct cl_target *t, const unsigned char *p, size_t len,
                             struct cl_symbols **out, struct cl_error *err);

#endif
