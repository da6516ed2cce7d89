/* methods.h - the methods of an energy figure (see "Energy and carbon" in the public header):
 * "measured" (a counter), "sampled" (power x time), "estimated" (a model), as static strings
 * that outlive any sample, and their rank from the most exact (1) to the least (3). Internal. */
#ifndef RT_CORE_METHODS_H
#define RT_CORE_METHODS_H

/* The static string "measured", "sampled" or "estimated" equal to m; NULL for anything else
 * (NULL included). */
const char *rt_energy_method_static(const char *m);
/* m's rank: 1 measured, 2 sampled, 3 estimated; 0 for anything else. */
int rt_energy_method_rank(const char *m);
/* The static string of a rank (1..3), NULL for any other. */
const char *rt_energy_method_of_rank(int rank);

#endif
