/* A streaming writer of Python pickles (protocol 2), enough for plain data: dicts, lists, str,
 * int, bool, None and pairs. What torch's tools read (torch.cuda.memory._snapshot()'s shape)
 * is a pickle, and Python reads these with pickle.load and no code of culeak's. */
#ifndef CULEAK_REPORT_PICKLE_H
#define CULEAK_REPORT_PICKLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct cl_pickle {
    FILE *out;
};

void cl_pickle_begin(struct cl_pickle *p, FILE *out);
void cl_pickle_end(struct cl_pickle *p);   /* STOP: one object written */
/* A dict's or list's items go between begin and end; a dict's as key, value, key, value. */
void cl_pickle_dict_begin(struct cl_pickle *p);
void cl_pickle_dict_end(struct cl_pickle *p);
void cl_pickle_list_begin(struct cl_pickle *p);
void cl_pickle_list_end(struct cl_pickle *p);
/* The two values written last become a tuple. */
void cl_pickle_pair(struct cl_pickle *p);
void cl_pickle_str(struct cl_pickle *p, const char *s);
void cl_pickle_int(struct cl_pickle *p, int64_t v);
void cl_pickle_uint(struct cl_pickle *p, uint64_t v);
void cl_pickle_bool(struct cl_pickle *p, bool v);
void cl_pickle_none(struct cl_pickle *p);

#endif
