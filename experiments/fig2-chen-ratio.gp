# experiments/fig2-chen-ratio.gp: draws figure 2 from its CSV, as PNG and
# SVG.  Called by experiments/fig2-chen-ratio with
#   gnuplot -e "datafile='...csv'; outbase='.../fig2-chen-ratio'; alphas='2 5 10'; top=5000"
# CSV columns: 1 alpha, 2 length, 3 strategy, 4 memory_slots, 5 forward_ops,
# 6 forward_ops_per_step, 7 chen_formula_slots, 8 chen_peak_slots,
# 9 fraction_of_chen_formula, 10 fraction_of_chen_peak.  Drawn: column 9
# for msm, ism and hsm (Chen's exact peak, the chen rows, is within a few
# percent of the formula and left to the CSV).
set datafile separator comma
na = words(alphas)
colour(i) = word("#1f77b4 #d62728 #2ca02c #9467bd #8c564b", i)
sel(a, s) = (column(1) == a && strcol(3) eq s ? column(9) : NaN)

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1200,800 enhanced font "DejaVu Sans,13"
    } else {
        set terminal svg size 1200,800 dynamic enhanced font "DejaVu Sans,13"
    }
    set output outbase.".".fmt
    set title "Memory needed for at most 2 forward ops per step (Chen's cost),\nas a fraction of Chen's sqrt(t)(1 + alpha) slots" font ",15"
    set logscale xy
    set xrange [10:top]
    set yrange [0.2:40]
    set format x "10^{%T}"
    set ytics (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1, 1.5, 2, 3, 5, 10, 20)
    set mxtics 10
    set grid xtics ytics mxtics lc rgb "#dddddd" lw 1
    set xlabel "sequence length t (steps)"
    set ylabel "memory (slots) / (sqrt(t) (1 + alpha))"
    set key outside right top box samplen 3 spacing 1.15 font ",12"
    plot 1 with lines lc rgb "black" lw 2 title "Chen: sqrt(t)(1 + alpha)", \
         0.5 with lines lc rgb "black" lw 1.5 dt (8,5) title "50%: the paper's claim for MSM", \
         for [i = 1:na] datafile using 2:(sel(word(alphas, i) + 0, "msm")) \
             with linespoints lc rgb colour(i) lw 2.5 pt 7 ps 0.6 \
             title sprintf("MSM, alpha = %s", word(alphas, i)), \
         for [i = 1:na] datafile using 2:(sel(word(alphas, i) + 0, "ism")) \
             with lines lc rgb colour(i) lw 2 dt (6,4) \
             title sprintf("ISM, alpha = %s", word(alphas, i)), \
         for [i = 1:na] datafile using 2:(sel(word(alphas, i) + 0, "hsm")) \
             with lines lc rgb colour(i) lw 1.5 dt (2,3) \
             title sprintf("HSM, alpha = %s", word(alphas, i))
    set output
}
