# experiments/fig9-twolevel.gp: draws figure 9 from its CSV, as PNG and SVG.
# Called by experiments/fig9-twolevel with
#   gnuplot -e "datafile='...csv'; outbase='fig9-twolevel'; t=1000; alpha=4; wd=2; rd=2"
# CSV columns: 1 kind, 2 fast_slots, 3 slow_slots, 4 cost, 5 cost_per_step.
# Kinds: hsm-one, hsm-two, msm-one, msm-two (two: slow_slots 10 or inf),
# hrevolve (H-Revolve's optimum from checkpoint_schedules, where given).
set datafile separator comma
sel(k, d) = (strcol(1) eq k && strcol(3) eq d ? column(5) : NaN)

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1200,800 enhanced font "DejaVu Sans,13"
    } else {
        set terminal svg size 1200,800 dynamic enhanced font "DejaVu Sans,13"
    }
    set output outbase.".".fmt
    set title sprintf("Cost per step against fast memory, t = %d: one level, and a slow level of 10 slots or unlimited\n(cost = forward ops + %g per hidden state written + %g per hidden state read; MSM's internal state %d slots)", t, wd, rd, alpha) font ",14"
    set logscale y
    set xrange [2:*]
    set yrange [2:40]
    set ytics (2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 40)
    set grid xtics ytics mytics lc rgb "#dddddd" lw 1
    set xlabel "fast memory (hidden-state slots, h(0)'s included)"
    set ylabel "cost per step (forward ops)"
    set key top right vertical box opaque samplen 4 spacing 1.15 width 0 font ",12"
    plot datafile using 2:(sel("hsm-one", "0")) with lines lc rgb "#08519c" lw 2 dt (6,4) title "HSM, one level", \
         datafile using 2:(sel("hsm-two", "10")) with lines lc rgb "#4292c6" lw 2.5 dt solid title "HSM, 10 slow slots", \
         datafile using 2:(sel("hsm-two", "inf")) with lines lc rgb "#9ecae1" lw 2.5 dt solid title "HSM, unlimited slow level", \
         datafile using 2:(sel("hrevolve", "10")) with points lc rgb "#e08214" pt 6 ps 2.2 lw 2 title "H-Revolve (checkpoint\\_schedules), 10 slots", \
         datafile using 2:(sel("hrevolve", "inf")) with points lc rgb "#e08214" pt 4 ps 2.2 lw 2 title "H-Revolve, unlimited", \
         datafile using 2:(sel("msm-one", "0")) with lines lc rgb "#a50f15" lw 2 dt (6,4) title "MSM, one level", \
         datafile using 2:(sel("msm-two", "10")) with lines lc rgb "#ef3b2c" lw 2.5 dt solid title "MSM, 10 slow slots", \
         datafile using 2:(sel("msm-two", "inf")) with lines lc rgb "#fc9272" lw 2.5 dt solid title "MSM, unlimited slow level"
    set output
}
