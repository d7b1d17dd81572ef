# experiments/fig4-cost-length.gp: draws figure 4 from its CSV, as PNG and
# SVG.  Called by experiments/fig4-cost-length with
#   gnuplot -e "datafile='...csv'; outbase='.../fig4-cost-length'; budgets='5 10 50'; top=10000; alpha=1"
# CSV columns: 1 strategy, 2 alpha, 3 memory_slots, 4 length, 5 forward_ops,
# 6 forward_ops_per_step, 7 growth_t_pow_1_over_m (t^(1/m)),
# 8 bound_m_t_pow_1_over_m (m t^(1/m), left to the CSV: for m = 50 it is
# 50 to 60 ops per step, far above every curve).
#
# Every series has a colour of its own: one hue per budget (blue, red,
# green, purple, brown), dark for MSM, middle for HSM, light for t^(1/m);
# and the kind has its dash pattern: MSM solid, HSM long dashes, t^(1/m)
# dots, full BPTT (1 op per step, the paper's grey line) dash-dot.  Where
# budgets give the same cost (short sequences: every budget holds the whole
# sequence) the smaller budget's line is drawn wider and first, so each
# stays visible around the next.
set datafile separator comma
nb = words(budgets)
msm_c(i) = word("#08519c #a50f15 #006d2c #54278f #7f3b08", i)
hsm_c(i) = word("#4292c6 #ef3b2c #41ab5d #807dba #e08214", i)
bnd_c(i) = word("#6baed6 #fb6a4a #74c476 #9e9ac8 #fdb863", i)
wid(i, w) = w + 1.5 * (nb - i) / (nb > 1 ? nb - 1 : 1)
sel(m, s, c) = (column(3) == m && strcol(1) eq s ? column(c) : NaN)

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1200,800 enhanced font "DejaVu Sans,13"
    } else {
        set terminal svg size 1200,800 dynamic enhanced font "DejaVu Sans,13"
    }
    set output outbase.".".fmt
    set title sprintf("Forward ops per step against the sequence length at a fixed memory of m slots\n(MSM with alpha = %d: an internal state costs %d slot%s; HSM keeps hidden states only;\nt^{1/m}: the growth of the paper's O(t^{1+1/m}) bound, per step; full BPTT: 1 op per step)", alpha, alpha, alpha == 1 ? "" : "s") font ",14"
    set logscale xy
    set xrange [1:top]
    set yrange [0.9:20]
    set format x "10^{%T}"
    set ytics (1, 1.5, 2, 3, 4, 5, 7, 10, 15, 20)
    set mxtics 10
    set grid xtics ytics mxtics lc rgb "#dddddd" lw 1
    set xlabel "sequence length t (steps)"
    set ylabel "forward ops per step (cost / t)"
    set key top left vertical maxrows nb box opaque samplen 4 spacing 1.15 width 0 font ",12"
    plot for [i = 1:nb] datafile using 4:(sel(word(budgets, i) + 0, "msm", 6)) \
             with lines lc rgb msm_c(i) lw wid(i, 2.5) dt solid \
             title sprintf("MSM m = %s", word(budgets, i)), \
         for [i = 1:nb] datafile using 4:(sel(word(budgets, i) + 0, "hsm", 6)) \
             with lines lc rgb hsm_c(i) lw wid(i, 2) dt (8,4) \
             title sprintf("HSM m = %s", word(budgets, i)), \
         for [i = 1:nb] datafile using 4:(sel(word(budgets, i) + 0, "msm", 7)) \
             with lines lc rgb bnd_c(i) lw 2.5 dt (2,2) \
             title sprintf("t^{1/m}, m = %s", word(budgets, i)), \
         1 with lines lc rgb "#7f7f7f" lw 1.5 dt (10,4,2,4) title "full BPTT"
    set output
}
