/* prom_text.h - writing metric families in the Prometheus text format (0.0.4) and OpenMetrics
 * 1.0.0 into an rt_ob: HELP/TYPE once per family, written with its first series only (a family
 * whose every figure is null leaves no line), label values escaped. Shared by prom_format.c
 * (/metrics) and textfile.c (node_exporter). Internal to the library. */
#ifndef RT_EXPORT_PROM_TEXT_H
#define RT_EXPORT_PROM_TEXT_H

#include <stdbool.h>

#include "../core/ob.h"
#include "labels.h"

typedef enum rt_prom_kind { RT_PROM_GAUGE, RT_PROM_COUNTER, RT_PROM_INFO } rt_prom_kind;

/* The writer's state: where, which labels every series carries, which format, the family now
 * being written. */
typedef struct rt_prom_out {
    rt_ob *o;
    const rt_labels *labels; /* the job's labels, first on every series; may be NULL */
    int openmetrics;         /* 1: OpenMetrics 1.0.0; 0: the text format 0.0.4 */
    const char *name;        /* the family's name: a counter's without _total, an info's
                              * without _info */
    rt_prom_kind kind;
    const char *help;
    bool head_done;          /* HELP and TYPE of this family written */
} rt_prom_out;

/* Starts the family name (the rules of rt_prom_out.name) of kind with its help text (plain
 * ASCII, no backslash nor newline). Writes nothing until its first series. */
void rt_prom_family(rt_prom_out *f, const char *name, rt_prom_kind kind, const char *help);

/* One series of the current family, labelled with the job's labels, then extra[0..n) (values
 * escaped), valued v with at most dec decimals; nothing when v is not finite. */
void rt_prom_num(rt_prom_out *f, const rt_kv *extra, size_t n, double v, int dec);
/* As rt_prom_num for an integer; nothing for RT_NULL_U64. */
void rt_prom_u64(rt_prom_out *f, const rt_kv *extra, size_t n, uint64_t v);
/* As rt_prom_num for an integer; nothing for RT_NULL_I64. */
void rt_prom_i64(rt_prom_out *f, const rt_kv *extra, size_t n, int64_t v);

/* s as the inside of a label value: backslash, double quote and newline escaped; a byte that
 * is not part of well-formed UTF-8 becomes U+FFFD. */
void rt_prom_label_value(rt_ob *o, const char *s);

/* Appends to o the OpenMetrics 1.0.0 body of text, a body of rt_format_prometheus in the text
 * format (openmetrics 0): a counter family's HELP/TYPE name without _total, a gauge family named
 * *_info as an info family without _info, "# EOF" at the end; series lines unchanged. Equal to
 * formatting the same sample with openmetrics 1 (the unit test holds them to it), at a fraction
 * of the cost: the /metrics server formats the text body per sample and this one per request. */
void rt_prom_openmetrics_of(const char *text, size_t len, rt_ob *o);

/* rt_format_prometheus with the tree's and its parts' series labelled phase="phase" (NULL: no
 * label; 0.14): the /metrics server's way, with its capped value (phase_label.h). */
size_t rt_prom_format_phase(const rt_sample *sample, const rt_job *job, const rt_host *host, const rt_cloud *cloud,
                            int openmetrics, const char *phase, char *buf, size_t cap);

#endif
