/* graph_random tests: to be written. */
#include "test.h"

void suite_graph_random(void) {
}
