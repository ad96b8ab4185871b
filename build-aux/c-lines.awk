# SPDX-License-Identifier: MIT
# c-lines.awk: prints a text file as the lines of a C string literal, one
# literal line per source line ("...\n"), with \ " ? tab and every byte
# outside printable ASCII escaped; an empty file gives "". The caller
# prints what comes before (the declaration) and after (the ";"). Used by
# embed-dialects.sh and embed-text.sh. POSIX awk.
BEGIN {
    for (i = 1; i < 256; i++)
        ord[sprintf("%c", i)] = i
}
{
    out = ""
    n = length($0)
    for (i = 1; i <= n; i++) {
        c = substr($0, i, 1)
        if (c == "\\")
            out = out "\\\\"
        else if (c == "\"")
            out = out "\\\""
        else if (c == "?")
            out = out "\\?"
        else if (c == "\t")
            out = out "\\t"
        else if (ord[c] < 32 || ord[c] > 126)
            out = out sprintf("\\%03o", ord[c])
        else
            out = out c
    }
    printf "    \"%s\\n\"\n", out
}
END {
    if (NR == 0)
        printf "    \"\"\n"
}
