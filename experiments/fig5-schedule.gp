# experiments/fig5-schedule.gp: draws figure 5 from its CSV, as PNG and
# SVG.  Called by experiments/fig5-schedule with
#   gnuplot -e "datafile='...csv'; outbase='.../fig5-schedule'; strategy='msm'; len=100; alpha=4; budget=31"
# CSV columns: 1 index, 2 op, 3 step, 4 stored_slots, 5 forward_ops,
# 6 kind (first_sweep, recompute, save_hidden, save_internal,
# restore_hidden, restore_internal, backward, free_hidden, free_internal),
# 7 stored_until (saves only).  Top: every action at (index, step), a stored
# state as a bar from its save to its free; bottom: stored slots.
set datafile separator comma
is(k) = (strcol(6) eq k)
at(k, v) = (is(k) ? v : NaN)

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1500,950 enhanced font "DejaVu Sans,13"
    } else {
        set terminal svg size 1500,950 dynamic enhanced font "DejaVu Sans,13"
    }
    set output outbase.".".fmt
    stats datafile using 1 nooutput
    last = STATS_max
    set multiplot title sprintf("One optimal schedule: %s, t = %d, alpha = %d, budget %d slots (%.1f%% of full BPTT's %d)", \
        strategy, len, alpha, budget, 100.0 * budget / (alpha * (len - 1)), alpha * (len - 1)) font ",15"
    # ---- top: the actions ------------------------------------------------
    set origin 0, 0.30
    set size 1, 0.65
    set lmargin 10; set rmargin 3; set tmargin 1; set bmargin 3
    set xrange [-5:last + 5]
    set yrange [-2:len + 2]
    set xtics auto
    set ytics 10
    set grid xtics ytics lc rgb "#e5e5e5"
    set xlabel "action index"
    set ylabel "time step"
    set key inside right top box opaque samplen 2 spacing 1.2 font ",12"
    plot datafile using 1:(at("save_hidden", column(3))):(column(7) - column(1)):(0) \
             with vectors nohead lc rgb "#1f77b4" lw 3 title "hidden state stored (save to free)", \
         '' using 1:(at("save_internal", column(3))):(column(7) - column(1)):(0) \
             with vectors nohead lc rgb "#2ca02c" lw 3 title "internal state stored (save to free)", \
         '' using 1:(at("first_sweep", column(3))) with points pt 7 ps 0.7 lc rgb "#7f7f7f" title "forward op, first sweep", \
         '' using 1:(at("recompute", column(3))) with points pt 7 ps 0.7 lc rgb "#ff7f0e" title "forward op, recomputation", \
         '' using 1:(at("restore_hidden", column(3))) with points pt 6 ps 1.0 lc rgb "#1f77b4" lw 1.5 title "restore hidden state", \
         '' using 1:(at("restore_internal", column(3))) with points pt 6 ps 1.0 lc rgb "#2ca02c" lw 1.5 title "restore from internal state", \
         '' using 1:(at("backward", column(3))) with points pt 5 ps 0.6 lc rgb "#d62728" title "backward op"
    # ---- bottom: stored slots ----------------------------------------------
    set origin 0, 0.0
    set size 1, 0.30
    set tmargin 0.5; set bmargin 3.5
    set yrange [0:budget * 1.5]
    set ytics 10
    set key inside left top horizontal box opaque samplen 2 font ",12"
    set xlabel "action index"
    set ylabel "stored (slots)"
    plot datafile using 1:4 with steps lc rgb "#444444" lw 1.5 title "stored slots (h(0) counted)", \
         budget with lines lc rgb "black" dt (8,5) lw 1.5 title sprintf("budget, %d slots", budget)
    unset multiplot
    set output
}
