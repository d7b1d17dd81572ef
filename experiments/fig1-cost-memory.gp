# experiments/fig1-cost-memory.gp: draws figure 1 from its CSV, as PNG and
# SVG.  Called by experiments/fig1-cost-memory with
#   gnuplot -e "datafile='...csv'; outbase='.../fig1-cost-memory'; alphas='2 5 10'; len=1000"
# (optionally gainfile='...csv' for the bottom row: the same columns, only
# the rows it needs; default datafile).
# CSV columns: 1 alpha, 2 length, 3 memory_slots, forward ops of 4 hsm,
# 5 ism, 6 msm, 7 ism_paper, 8 msm_paper, 9 chen (only in the row of
# Chen's own peak).  Top row: forward ops per step against the budget;
# bottom row: how many more forward ops the paper's recursions spend than
# ours, at every budget where they spend more.
set datafile separator comma
na = words(alphas)
if (!exists("gainfile")) gainfile = datafile

set style line 1 lc rgb "#7f7f7f" lw 2 dt 1            # hsm
set style line 2 lc rgb "#1f77b4" lw 2 dt 1            # ism (ours)
set style line 3 lc rgb "#d62728" lw 2 dt 1            # msm (ours)
set style line 4 lc rgb "#17becf" lw 1.5 dt (5,4)      # ism (paper)
set style line 5 lc rgb "#ff7f0e" lw 1.5 dt (5,4)      # msm (paper)
set style line 6 lc rgb "black" pt 7 ps 1.6            # chen
set style line 7 lc rgb "#1f77b4" pt 6 ps 0.7          # ism gain
set style line 8 lc rgb "#d62728" pt 7 ps 0.4          # msm gain

sel(a, v) = (column(1) == a ? v : NaN)

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1650,1000 enhanced font "DejaVu Sans,13"
    } else {
        set terminal svg size 1650,1000 dynamic enhanced font "DejaVu Sans,13"
    }
    set output outbase.".".fmt
    set multiplot title sprintf("Forward ops per step against the memory budget, t = %d\nmemory in slots: a hidden state is 1 slot, an internal state alpha slots, h(0) counts", len) font ",15"
    w = 1.0 / na
    do for [i = 1:na] {
        a = word(alphas, i) + 0
        full = a * (len - 1)
        # ---- top: cost per step ------------------------------------------
        set origin (i - 1) * w, 0.33
        set size w, 0.60
        set lmargin 10; set rmargin 2; set tmargin 2; set bmargin 3.5
        set title sprintf("alpha = %d  (internal state = %d hidden states)", a, a)
        set logscale xy
        set xrange [1:full * 1.15]
        set yrange [1:800]
        set format x "10^{%T}"
        set format y "%g"
        set ytics (1, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500)
        set xtics auto
        set mxtics 10
        set grid xtics ytics mxtics lc rgb "#dddddd" lw 1
        set xlabel "memory budget (slots)"
        set ylabel "forward ops per step (cost / t)"
        set key top right box opaque samplen 3 spacing 1.1 font ",12"
        plot datafile using 3:(sel(a, column(4) / len)) with lines ls 1 title "HSM", \
             '' using 3:(sel(a, column(5) / len)) with lines ls 2 title "ISM (ours, optimal)", \
             '' using 3:(sel(a, column(6) / len)) with lines ls 3 title "MSM (ours, optimal)", \
             '' using 3:(sel(a, column(7) / len)) with lines ls 4 title "ISM, paper's recursion", \
             '' using 3:(sel(a, column(8) / len)) with lines ls 5 title "MSM, paper's recursion", \
             '' using 3:(sel(a, column(9) / len)) with points ls 6 title "Chen's sqrt(t), own peak"
        # ---- bottom: the paper's recursion minus ours ----------------------
        set origin (i - 1) * w, 0.0
        set size w, 0.33
        set tmargin 1; set bmargin 3.5
        unset title
        set logscale y
        set yrange [0.7:2000]
        set format y "%g"
        set ytics (1, 10, 100, 1000)
        set xlabel "memory budget (slots)"
        set ylabel "paper's recursion minus\nours (forward ops)"
        set key top right box opaque font ",12"
        plot gainfile using 3:(sel(a, column(7) > column(5) ? column(7) - column(5) : NaN)) with points ls 7 title "ISM", \
             '' using 3:(sel(a, column(8) > column(6) ? column(8) - column(6) : NaN)) with points ls 8 title "MSM"
    }
    unset multiplot
    set output
}
