/* Warnings gathered along the way: one line each, kept newline-separated in one string so any
 * layer can add to its own list and the reports print them all. */
#ifndef CULEAK_UTIL_NOTES_H
#define CULEAK_UTIL_NOTES_H

/* Appends a formatted line to *notes (NULL means empty); allocation failure drops the line. */
void cl_note_add(char **notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
