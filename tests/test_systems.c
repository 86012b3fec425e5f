/* systems tests: to be written. */
#include "test.h"

void suite_systems(void) {
}
