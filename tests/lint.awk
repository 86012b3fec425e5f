# make lint: the shape of ecs.h, checked (awk -f tests/lint.awk ecs.h).
#   - CONTENTS in the docs block lists the section tags in the order of the
#     banners (/* ---- >>tag: ... */; repeated banners of one tag count once)
#   - no function is declared by two prototypes
#   - no function is longer than 120 lines, no section longer than 900
#   - every public function (ECS_API, in the public part) has a doc comment
#     right above its declaration or on its line
#   - a blank line follows each function
# With -v sizes=1 it prints each section's size.

function fail(msg) { print "ecs.h:" NR ": " msg; bad++ }
function fname(s) { if (match(s, /[A-Za-z_][A-Za-z_0-9]*[ \t]*\(/)) { s = substr(s, RSTART, RLENGTH); sub(/[ \t]*\($/, "", s); return s } return "?" }

BEGIN { MAXFN = 120; MAXSEC = 900 }

# ---- CONTENTS: the tags between "CONTENTS" and the next blank line
/^   CONTENTS/ { incontents = 1; next }
incontents && /^[ \t]*$/ { incontents = 0 }
incontents {
    line = $0
    while (match(line, />>[a-z]+/)) { contents[++ncontents] = substr(line, RSTART + 2, RLENGTH - 2); line = substr(line, RSTART + RLENGTH) }
}

# ---- a blank line after each function
prev ~ /^\}[ \t]*$/ && /^(static|ECS_API|ECS__|\/\*|typedef|#define|enum)/ { fail("no blank line between this and the function above") }

# ---- sections: banners (the license's sits in a comment of its own)
/^(\/\* )?---- >>[a-z]+/ {
    match($0, />>[a-z]+/); tag = substr($0, RSTART + 2, RLENGTH - 2)
    if (tag != cur) {
        if (cur != "") secsize(cur, NR - secstart)
        banners[++nbanners] = tag; cur = tag; secstart = NR
    }
}
function secsize(t, n) {
    if (sizes) printf "  %-12s %5d\n", t, n
    if (n > MAXSEC) { printf "ecs.h:%d: section >>%s is %d lines (at most %d)\n", secstart, t, n, MAXSEC; bad++ }
}

# ---- the public part ends where the implementation begins
/^#ifdef ECS_IMPLEMENTATION/ { impl = 1 }

# ---- public declarations carry a doc comment: a comment ending right above
#      the declaration's first line, or one on one of its lines
!impl && /^ECS_API/ { indecl = 1; declline = NR; declname = fname($0); documented = prev ~ /\*\/[ \t]*$/ }
indecl {
    if ($0 ~ /\/\*/) documented = 1
    if ($0 ~ /;[ \t]*(\/\*.*)?$/) {
        indecl = 0
        if (!documented) { print "ecs.h:" declline ": public " declname " has no doc comment"; bad++ }
    }
}

# ---- prototypes (a line at column 0 ending in ");" that names a function)
impl && /^(static|ECS_API|ECS__COLD|ECS__NOINLINE)[^=]*\([^=]*\);[ \t]*$/ && !/^(typedef|#)/ {
    n = fname($0)
    if (n in proto) fail("second prototype of " n " (the first at line " proto[n] ")")
    else proto[n] = NR
}

# ---- functions: a definition starts at column 0 and opens its body with a
#      "{" ending a line; it ends at the first "}" at column 0
impl && !infn && !pend && /^[A-Za-z_].*\(/ && !/;[ \t]*(\/\*.*)?$/ && !/^(typedef|struct|enum|union|#|extern)/ { pend = 1; start = NR; sig = $0 }
pend && /\{[ \t]*$/ { pend = 0; infn = 1 }
pend && /;[ \t]*$/ { pend = 0 }
infn && /^\}/ {
    infn = 0
    if (NR - start + 1 > MAXFN) { print "ecs.h:" start ": " fname(sig) " is " NR - start + 1 " lines (at most " MAXFN ")"; bad++ }
}

{ prev = $0 }

END {
    if (cur != "") secsize(cur, NR - secstart + 1)
    same = ncontents == nbanners
    for (i = 1; same && i <= nbanners; i++) same = contents[i] == banners[i]
    if (!same) {
        s = ""; for (i = 1; i <= ncontents; i++) s = s " " contents[i]
        t = ""; for (i = 1; i <= nbanners; i++) t = t " " banners[i]
        print "ecs.h: CONTENTS lists" s "\necs.h: the banners are" t; bad++
    }
    if (bad) { print bad " lint finding(s)"; exit 1 }
    print "lint: ecs.h is in shape"
}
