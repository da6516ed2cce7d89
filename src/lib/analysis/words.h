/* words.h - the words the summary text and the report share for the same fact, so that the
 * terminal and the page never say it differently: a command's exit status ("0", "130 (killed
 * by signal 2, SIGINT)"). Not public. */
#ifndef RT_ANALYSIS_WORDS_H
#define RT_ANALYSIS_WORDS_H

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* A signal's abbreviation ("INT"), or NULL: glibc's sigabbrev_np; other C libraries (musl: the
 * static build) lack it, and there the usual signals are named here. */
static inline const char *rt_signal_abbrev(int sig)
{
#ifdef __GLIBC__
    return sigabbrev_np(sig);
#else
    switch (sig) {
    case SIGHUP: return "HUP";
    case SIGINT: return "INT";
    case SIGQUIT: return "QUIT";
    case SIGILL: return "ILL";
    case SIGTRAP: return "TRAP";
    case SIGABRT: return "ABRT";
    case SIGBUS: return "BUS";
    case SIGFPE: return "FPE";
    case SIGKILL: return "KILL";
    case SIGUSR1: return "USR1";
    case SIGSEGV: return "SEGV";
    case SIGUSR2: return "USR2";
    case SIGPIPE: return "PIPE";
    case SIGALRM: return "ALRM";
    case SIGTERM: return "TERM";
    case SIGCHLD: return "CHLD";
    case SIGCONT: return "CONT";
    case SIGSTOP: return "STOP";
    case SIGTSTP: return "TSTP";
    case SIGTTIN: return "TTIN";
    case SIGTTOU: return "TTOU";
    case SIGURG: return "URG";
    case SIGXCPU: return "XCPU";
    case SIGXFSZ: return "XFSZ";
    case SIGVTALRM: return "VTALRM";
    case SIGPROF: return "PROF";
    case SIGWINCH: return "WINCH";
    case SIGIO: return "IO";
    case SIGPWR: return "PWR";
    case SIGSYS: return "SYS";
    default: return NULL;
    }
#endif
}

/* status as words into buf[cap]: the number, and for 129..192 (the shell's 128 + a signal) the
 * signal's number and name. Returns buf. */
static inline const char *rt_exit_words(char *buf, size_t cap, int status)
{
    if (status > 128 && status < 128 + 65) {
        const char *name = rt_signal_abbrev(status - 128);
        snprintf(buf, cap, "%d (killed by signal %d%s%s)", status, status - 128, name ? ", SIG" : "", name ? name : "");
    } else {
        snprintf(buf, cap, "%d", status);
    }
    return buf;
}

#endif
