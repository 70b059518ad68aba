/* Which rank of a distributed job a target is: the RANK, LOCAL_RANK and WORLD_SIZE its launcher
 * (torchrun, torch.distributed.run, Slurm's srun with a wrapper, mpirun) put in its environment,
 * read from libc's environ in the target's memory, so that a core says it as a live process
 * does. */
#ifndef CULEAK_RUNTIME_RANK_H
#define CULEAK_RUNTIME_RANK_H

#include "symbols/symbols.h"
#include "target/target.h"

struct cl_rank {
    int rank, local_rank, world_size;   /* -1: not in the environment */
};

/* The order reports list ranks in: by rank, those naming none (-1) last; then by pid. */
int cl_rank_order(const struct cl_rank *x, int xpid, const struct cl_rank *y, int ypid);

/* Fills out (all -1 when the target has no libc environ culeak can read; a dump made before
 * culeak recorded the environment has none). */
void cl_rank_detect(struct cl_target *t, const struct cl_symbols *syms, struct cl_rank *out);

#endif
