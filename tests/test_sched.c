/* sched tests: to be written. */
#include "test.h"

void suite_sched(void) {
}
