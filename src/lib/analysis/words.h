/* words.h - the words the summary text and the report share for the same fact, so that the
 * terminal and the page never say it differently: a command's exit status ("0", "130 (killed
 * by signal 2, SIGINT)"). Not public. */
#ifndef RT_ANALYSIS_WORDS_H
#define RT_ANALYSIS_WORDS_H

#include <stdio.h>
#include <string.h>

/* status as words into buf[cap]: the number, and for 129..192 (the shell's 128 + a signal) the
 * signal's number and name. Returns buf. */
static inline const char *rt_exit_words(char *buf, size_t cap, int status)
{
    if (status > 128 && status < 128 + 65) {
        const char *name = sigabbrev_np(status - 128);
        snprintf(buf, cap, "%d (killed by signal %d%s%s)", status, status - 128, name ? ", SIG" : "", name ? name : "");
    } else {
        snprintf(buf, cap, "%d", status);
    }
    return buf;
}

#endif
