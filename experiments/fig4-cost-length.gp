# experiments/fig4-cost-length.gp: draws figure 4 from its CSV, as PNG and
# SVG.  Called by experiments/fig4-cost-length with
#   gnuplot -e "datafile='...csv'; outbase='.../fig4-cost-length'; budgets='5 10 50'; top=10000; alpha=1"
# CSV columns: 1 strategy, 2 alpha, 3 memory_slots, 4 length, 5 forward_ops,
# 6 forward_ops_per_step, 7 growth_t_pow_1_over_m (t^(1/m)),
# 8 bound_m_t_pow_1_over_m (m t^(1/m), left to the CSV: for m = 50 it is
# 50 to 60 ops per step, far above every curve).
set datafile separator comma
nb = words(budgets)
colour(i) = word("#1f77b4 #d62728 #2ca02c #9467bd #8c564b", i)
sel(m, s, c) = (column(3) == m && strcol(1) eq s ? column(c) : NaN)

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1200,800 enhanced font "DejaVu Sans,13"
    } else {
        set terminal svg size 1200,800 dynamic enhanced font "DejaVu Sans,13"
    }
    set output outbase.".".fmt
    set title sprintf("Forward ops per step against sequence length at a fixed memory of m slots\n(MSM with alpha = %d: an internal state costs %d slot%s; HSM keeps hidden states only)", alpha, alpha, alpha == 1 ? "" : "s") font ",15"
    set logscale xy
    set xrange [1:top]
    set yrange [0.9:20]
    set format x "10^{%T}"
    set ytics (1, 1.5, 2, 3, 4, 5, 7, 10, 15, 20)
    set mxtics 10
    set grid xtics ytics mxtics lc rgb "#dddddd" lw 1
    set xlabel "sequence length t (steps)"
    set ylabel "forward ops per step (cost / t)"
    set key top left box opaque samplen 3 spacing 1.15 font ",12"
    plot for [i = 1:nb] datafile using 4:(sel(word(budgets, i) + 0, "msm", 6)) \
             with lines lc rgb colour(i) lw 2.5 \
             title sprintf("MSM, m = %s", word(budgets, i)), \
         for [i = 1:nb] datafile using 4:(sel(word(budgets, i) + 0, "hsm", 6)) \
             with lines lc rgb colour(i) lw 2 dt (6,4) \
             title sprintf("HSM, m = %s", word(budgets, i)), \
         for [i = 1:nb] datafile using 4:(sel(word(budgets, i) + 0, "msm", 7)) \
             with lines lc rgb colour(i) lw 1.5 dt (2,3) \
             title sprintf("t^{1+1/m} / t, m = %s (shape of the paper's bound)", word(budgets, i))
    set output
}
