# fig7-memory-time.gp: checkpoint memory held through one measured training
# iteration, per strategy, and the forward ops each spent (data from
# experiments/fig7-memory-time).  Left: one panel per strategy, checkpoint
# MiB after each action against the share of the iteration's actions done,
# the budget dashed.  Right: forward ops done so far per step, same axis.
# Variables: datafile, outfile, term (png or svg), T, H, BATCH, budget (as
# given), notes (strategies run above the budget, or ''), and per strategy
# S (full, chen, hsm, msm): B_S budget bytes, P_S measured peak bytes, F_S
# forward ops.
if (term eq 'png') set terminal pngcairo size 1400,860 font 'sans,11'
if (term eq 'svg') set terminal svg size 1400,860 font 'sans,11'
set output outfile
set datafile separator ','
MiB = 1048576.
array S[4] = ['full', 'chen', 'hsm', 'msm']
array NAME[4] = ['full BPTT', 'Chen sqrt(t)', 'BPTT-HSM', 'BPTT-MSM']
array COLOR[4] = ['#2ca02c', '#d62728', '#ff7f0e', '#1f77b4']
caption = sprintf('Measured: checkpoint memory through one training iteration of an LSTM, t = %d, hidden %d, batch %d; budget %s of full BPTT''s', T, H, BATCH, budget)
if (strlen(notes) > 0) caption = caption . "\n(" . notes . ')'
set multiplot title caption
set grid
set xrange [0:1]
set lmargin 10
set rmargin 2
do for [i = 1:4] {
    s = S[i]
    b = value('B_'.s) / MiB
    p = value('P_'.s) / MiB
    f = value('F_'.s)
    set origin 0, 0.70 - (i - 1) * 0.215
    set size 0.62, 0.215
    set tmargin 0.5
    set bmargin (i == 4 ? 3 : 0.5)
    set format x (i == 4 ? '%g' : '')
    set xlabel (i == 4 ? 'share of the iteration''s actions done' : '')
    set ylabel 'MiB held'
    set yrange [0:(b > p ? b : p) * 1.4]
    set key top right opaque box samplen 2
    set label 1 sprintf('%s: peak %.2f MiB, %d forward ops (%.3g per step)', NAME[i], p, f, f / real(T)) at graph 0.01, graph 0.9 left front
    plot datafile using (strcol(1) eq s ? column(4) : 1/0):(column(7) / MiB) with filledcurves y1=0 fs transparent solid 0.3 noborder lc rgb COLOR[i] notitle, \
         '' using (strcol(1) eq s ? column(4) : 1/0):(column(7) / MiB) with lines lw 1.5 lc rgb COLOR[i] title 'checkpoints held', \
         b with lines dt 2 lw 2 lc rgb 'black' title (i == 1 ? 'its 100%' : sprintf('budget, %.2f MiB', b))
    unset label 1
}
set origin 0.63, 0.055
set size 0.37, 0.86
set tmargin 1
set bmargin 3
set format x '%g'
set xlabel 'share of the iteration''s actions done'
set ylabel 'forward ops done so far / t'
set yrange [0:*]
set key top left opaque box
set title 'Forward ops spent (recomputation above 1)'
plot for [i = 1:4] datafile using (strcol(1) eq S[i] ? column(4) : 1/0):(column(9) / real(T)) \
         with lines lw 2 lc rgb COLOR[i] title sprintf('%s: %.3g t', NAME[i], value('F_'.S[i]) / real(T)), \
     1 with lines dt 2 lc rgb 'gray' title 't: each step once'
unset multiplot
