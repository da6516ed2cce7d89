/* text_out.h - the line writer the texts for people share (the summary, a job on several
 * nodes): lines handed whole to the caller's fd or callback, and figures in the units chosen
 * (readable automatic ones, or gpu_tracker's forced memory and time units). Internal. */
#ifndef RT_ANALYSIS_TEXT_OUT_H
#define RT_ANALYSIS_TEXT_OUT_H

#include <stddef.h>

#include "../core/out.h"
#include "resource_tracker.h"

#define RT_TX_WRAP 100 /* the width the answer's lines break at by default (the tool's without a terminal) */

/* A writer of lines through the caller's callback, with the units the figures are shown in. */
typedef struct rt_text_out {
    rt_out dst;     /* the caller's fd or callback */
    rt_error err;   /* RT_OK until a write failed; after that nothing more is written */
    char buf[1024]; /* the line being made; handed over at its newline (or when full) */
    size_t n;
    double mem_bytes; /* a forced memory unit's size in bytes; 0: readable automatic units */
    const char *mem_name;
    double time_secs; /* a forced time unit; 0: automatic */
    const char *time_name;
    rt_scheduler scheduler; /* the words the "Ask for" line speaks */
    size_t width;           /* the answer's lines break before this column */
} rt_text_out;

/* Fills o for dst with opts' units, scheduler and width (NULL opts: the defaults). Returns 0,
 * or -1 for an unknown unit or scheduler, or a struct_size too small. */
int rt_tx_open(rt_text_out *o, rt_out dst, const rt_summary_text_options *opts);
/* Hands what o holds to the fd or the callback; o->err says whether every write went. */
void rt_tx_flush(rt_text_out *o);
/* Adds p[0..len) (handed over at each newline, or when the line buffer is full). */
void rt_tx_put(rt_text_out *o, const char *p, size_t len);
/* Adds printf's text (under 2 KiB). */
#define rt_tx_say(o, ...) rt_putf(rt_tx_put_to, 1 ? (o) : (rt_text_out *)0, __VA_ARGS__) /* o: an rt_text_out * */
void rt_tx_put_to(void *o, const char *p, size_t len); /* rt_tx_put for rt_putf */
/* "SLURM", "Kubernetes" or "Metaflow". */
const char *rt_tx_scheduler_name(rt_scheduler s);
/* v with `decimals` decimals and the suffix (may be ""), into b: "-" when v is NaN or
 * infinite, three significant digits when it is too large for fixed notation to be read. */
const char *rt_tx_number(double v, int decimals, const char *suffix, char *b, size_t cap);
/* MiB as text into b: the forced unit, or B/KiB/MiB/GiB/TiB as fits; "-" for NaN. */
const char *rt_tx_mem(const rt_text_out *o, double mib, char *b, size_t cap);
/* Seconds as text: the forced unit, or "1 h 02 min 03 s", "3 min 04.5 s", "12.34 s"; "-" for NaN. */
const char *rt_tx_dur(const rt_text_out *o, double secs, char *b, size_t cap);
/* Joules as text: J, kJ, MJ or GJ with three significant digits at most; "-" for NaN. */
const char *rt_tx_joules(double j, char *b, size_t cap);
/* Writes text after a head already written (used columns wide), broken at spaces so that no
 * line passes o->width columns (UTF-8 characters, not bytes; a word longer than a line stands
 * alone on its line); the lines after the first start with indent spaces. */
void rt_tx_wrapped(rt_text_out *o, size_t used, size_t indent, const char *text);

#endif
