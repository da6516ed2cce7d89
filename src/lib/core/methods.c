/* methods.c - the energy figures' methods (methods.h): the three words as static strings, and
 * their order from the most exact to the least. */
#include <string.h>

#include "core.h"
#include "methods.h"

static const char *const names[] = {"measured", "sampled", "estimated"};

const char *rt_energy_method_static(const char *m)
{
    for (size_t i = 0; m && i < RT_ARRAY_LEN(names); i++)
        if (strcmp(m, names[i]) == 0)
            return names[i];
    return NULL;
}

int rt_energy_method_rank(const char *m)
{
    for (size_t i = 0; m && i < RT_ARRAY_LEN(names); i++)
        if (strcmp(m, names[i]) == 0)
            return (int)i + 1;
    return 0;
}

const char *rt_energy_method_of_rank(int rank)
{
    return rank >= 1 && rank <= (int)RT_ARRAY_LEN(names) ? names[rank - 1] : NULL;
}
