# experiments/fig1-cost-memory.gp: draws figure 1 from its CSV, as PNG and
# SVG.  Called by experiments/fig1-cost-memory with
#   gnuplot -e "datafile='...csv'; outbase='.../fig1-cost-memory'; alphas='2 5 10'; fulls='1998 4995 9990'; msm5='1.950 1.950 1.950'; len=1000"
# (fulls: full BPTT's peak in slots per alpha, the 100% of the top axis;
# msm5: MSM's forward ops per step at 5% of it, written by the 5% line;
# optionally gainfile='...csv' for the bottom row: the same columns, only
# the rows it needs; default datafile; gains='ISM MSM ISM MSM ...': how
# many budgets each bottom panel has, two words per alpha; default: all).
# CSV columns: 1 alpha, 2 length, 3 full_peak_slots, 4 memory_slots,
# 5 memory_pct_of_full, forward ops of 6 hsm, 7 ism, 8 msm, 9 ism_paper,
# 10 msm_paper, 11 chen (only in the row of Chen's own peak).
# One legend strip for every panel; top row: forward ops per step against
# the budget, in slots (bottom axis) and in % of full BPTT's peak (top
# axis, each panel its own); bottom row: how many more forward ops the
# paper's recursions spend than ours, at every budget where they spend more.
#
# Every series has its own colour and its own dash pattern.  Ours (ISM
# wide dashes, MSM solid) are drawn first and wide; the paper's recursions
# thin and on top, so where a recursion equals ours (most budgets) both
# stay visible: the thin dashes run inside the wide line.
set datafile separator comma
na = words(alphas)
if (!exists("gainfile")) gainfile = datafile
if (!exists("gains")) gains = ""
if (!exists("msm5")) msm5 = ""
gain_n(i, k) = (words(gains) >= 2 * i ? word(gains, 2 * i - 2 + k) + 0 : 1)

set style line 1 lc rgb "#7f7f7f" lw 2   dt (10,4,2,4)      # hsm
set style line 2 lc rgb "#1f77b4" lw 5   dt (8,4)           # ism (ours)
set style line 3 lc rgb "#d62728" lw 2.5 dt solid           # msm (ours)
set style line 4 lc rgb "#ff7f0e" lw 2   dt (2,4)           # ism (paper)
set style line 5 lc rgb "black"   lw 1.2 dt (4,9)           # msm (paper)
set style line 6 lc rgb "#9467bd" pt 7 ps 1.8               # chen
set style line 7 lc rgb "#1f77b4" pt 6 ps 0.7               # ism gain
set style line 8 lc rgb "#d62728" pt 7 ps 0.4               # msm gain
set style line 9 lc rgb "#2ca02c" lw 1.5 dt (3,3)           # 5% of full

sel(a, v) = (column(1) == a ? v : NaN)
wpx = na > 3 ? 550 * na : 1650          # 550 pixels a panel, the legend's room at least

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size wpx,1150 enhanced font "DejaVu Sans,13"
    } else {
        set terminal svg size wpx,1150 dynamic enhanced font "DejaVu Sans,13"
    }
    set output outbase.".".fmt
    set multiplot title sprintf("Forward ops per step against the memory budget, t = %d\nmemory in slots (a hidden state is 1 slot, an internal state alpha slots, h(0) counts) and in %% of full BPTT's peak", len) font ",15"

    # ---- the legend, once for every panel ------------------------------------
    set origin 0, 0.86
    set size 1, 0.065
    set lmargin 0; set rmargin 0; set tmargin 0; set bmargin 0
    unset border; unset tics; unset xlabel; unset ylabel; unset title
    unset logscale; unset grid; unset arrow; unset label
    set xrange [0:1]; set yrange [0:1]
    set key center center horizontal maxrows 2 samplen 5 width 1 spacing 1.2 font ",13" nobox
    plot NaN with lines ls 1 title "HSM", \
         NaN with lines ls 2 title "ISM (ours, optimal)", \
         NaN with lines ls 3 title "MSM (ours, optimal)", \
         NaN with points ls 6 title "Chen's sqrt(t), its own peak", \
         NaN with lines ls 4 title "ISM, paper's recursion", \
         NaN with lines ls 5 title "MSM, paper's recursion", \
         NaN with lines ls 9 title "5% of full BPTT's peak"
    set border
    set tics

    w = 1.0 / na
    do for [i = 1:na] {
        a = word(alphas, i) + 0
        full = word(fulls, i) + 0
        f5 = full / 20          # the largest budget within 5%: floor of it
        # ---- top: cost per step ------------------------------------------
        set origin (i - 1) * w, 0.33
        set size w, 0.52
        set lmargin 10; set rmargin 3; set tmargin 5.5; set bmargin 3.5
        unset title
        set logscale xy
        set xrange [1:full * 1.15]
        ymax = (len + 1) / 2.0 * 1.6    # the top curve: t(t + 1)/2 ops, 1 slot
        set yrange [1:ymax]
        set format x "10^{%T}"
        set format y "%g"
        set xtics auto nomirror
        set mxtics 10
        set ytics (1, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500)
        # the same log scale, in % of this panel's full BPTT peak
        set logscale x2
        set x2range [100.0 / full : 115]
        set x2tics ("0.01%%" 0.01, "0.1%%" 0.1, "1%%" 1, "5%%" 5, "20%%" 20, "100%%" 100) out
        set grid xtics ytics mxtics lc rgb "#dddddd" lw 1
        set xlabel "memory budget (slots)"
        set x2label sprintf("{/:Bold alpha = %d} (an internal state is %d slot%s)\nmemory in %% of full BPTT's peak (%d slots)", a, a, a == 1 ? "" : "s", full) offset 0, -0.3
        set ylabel "forward ops per step (cost / t)"
        unset key
        set arrow 1 from first f5, graph 0 to first f5, graph 1 nohead ls 9 front
        # the 5% label beside its line, on the side with more room
        if (words(msm5) >= i) {
            lab = sprintf("5%% = %d slots:\nMSM %s ops/step", int(f5), word(msm5, i))
        } else {
            lab = sprintf("5%% = %d slots", int(f5))
        }
        if (log(f5) > log(full * 1.15) / 2) {
            set label 1 lab at first f5 / 1.12, first ymax / 5 right font ",12" front
        } else {
            set label 1 lab at first f5 * 1.12, first ymax / 5 left font ",12" front
        }
        plot datafile using 4:(sel(a, column(6) / len)) with lines ls 1 notitle, \
             '' using 4:(sel(a, column(7) / len)) with lines ls 2 notitle, \
             '' using 4:(sel(a, column(8) / len)) with lines ls 3 notitle, \
             '' using 4:(sel(a, column(9) / len)) with lines ls 4 notitle, \
             '' using 4:(sel(a, column(10) / len)) with lines ls 5 notitle, \
             '' using 4:(sel(a, column(11) / len)) with points ls 6 notitle
        unset label 1
        unset x2tics
        unset x2label
        unset logscale x2
        # ---- bottom: the paper's recursion minus ours ----------------------
        set origin (i - 1) * w, 0.0
        set size w, 0.33
        set tmargin 1; set bmargin 3.5
        set logscale y
        set yrange [0.7:2000]
        set format y "%g"
        set ytics (1, 10, 100, 1000)
        set xtics mirror
        set xlabel "memory budget (slots)"
        set ylabel "paper's recursion minus\nours (forward ops)"
        set key top right box opaque font ",12"
        plot NaN notitle, \
             for [k = 1:(gain_n(i, 1) > 0)] gainfile \
                 using 4:(sel(a, column(9) > column(7) ? column(9) - column(7) : NaN)) \
                 with points ls 7 title "ISM", \
             for [k = 1:(gain_n(i, 2) > 0)] gainfile \
                 using 4:(sel(a, column(10) > column(8) ? column(10) - column(8) : NaN)) \
                 with points ls 8 title "MSM"
        unset arrow 1
    }
    unset multiplot
    set output
}
