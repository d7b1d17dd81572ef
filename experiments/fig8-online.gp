# experiments/fig8-online.gp: draws figure 8 from its CSV, as PNG and SVG.
# Called by experiments/fig8-online with
#   gnuplot -e "datafile='...csv'; outbase='fig8-online'; slots=10; top=10000; alpha=1"
# CSV columns: 1 kind, 2 memory_slots, 3 alpha, 4 length, 5 forward_ops,
# 6 forward_ops_per_step.  Kinds: online-hsm, online-msm (the planners of
# online.h, each step announced last or not), offline-hsm, offline-msm
# (the optimum knowing the length), revolve-online (Revolve's online mode,
# where its counts were given).
set datafile separator comma
sel(s) = (strcol(1) eq s ? column(6) : NaN)

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1200,800 enhanced font "DejaVu Sans,13"
    } else {
        set terminal svg size 1200,800 dynamic enhanced font "DejaVu Sans,13"
    }
    set output outbase.".".fmt
    set title sprintf("Forward ops per step against the length the sequence turns out to have, at %d slots\n(online: the length unknown until the last step begins; offline: known in advance;\nMSM's internal state costs %d slot%s)", slots, alpha, alpha == 1 ? "" : "s") font ",14"
    set logscale x
    set xrange [1:top]
    set yrange [0:*]
    set format x "10^{%T}"
    set mxtics 10
    set grid xtics ytics mxtics lc rgb "#dddddd" lw 1
    set xlabel "sequence length T (steps)"
    set ylabel "forward ops per step (cost / T)"
    set key top left vertical box opaque samplen 4 spacing 1.15 width 0 font ",12"
    plot datafile using 4:(sel("revolve-online")) with lines lc rgb "#e08214" lw 5 dt solid title "Revolve online (its own source, hidden states)", \
         datafile using 4:(sel("online-hsm")) with lines lc rgb "#4292c6" lw 2.5 dt solid title "online HSM", \
         datafile using 4:(sel("offline-hsm")) with lines lc rgb "#08519c" lw 1.5 dt (6,4) title "offline HSM optimum", \
         datafile using 4:(sel("online-msm")) with lines lc rgb "#a50f15" lw 2.5 dt solid title "online MSM", \
         datafile using 4:(sel("offline-msm")) with lines lc rgb "#fb6a4a" lw 1.5 dt (6,4) title "offline MSM optimum"
    set output
}
