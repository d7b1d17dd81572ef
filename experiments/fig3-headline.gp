# fig3-headline.gp: time per iteration against memory, both relative to full
# BPTT, measured on an LSTM (data from experiments/fig3-headline), and against
# the plan's forward ops.  Each measured ratio is the median over the rounds
# of the sweep, its bar the rounds' min to max (full BPTT's bar: its own runs
# over their median); MSM's points carry their budgets.  The dashed line is
# the time the plan's forward ops predict at full BPTT's measured forward
# step time (predicted_ratio).  A point whose kept run, or the full BPTT runs
# it is measured against, stayed disturbed is ringed (not to be trusted).
# Variables: datafile, outfile, term (png or svg), T, H, B.
if (term eq 'png') set terminal pngcairo size 1650,560 font 'sans,11'
if (term eq 'svg') set terminal svg size 1650,560 font 'sans,11' dynamic
set output outfile
set datafile separator ','
# columns: 2 budget, 3 forward_ops_per_step, 9 checkpoint_fraction,
# 10 total_fraction, 11 time_ratio (median), 13/14 time_ratio_min/max,
# 19 disturbed, 20 ref_disturbed, 24 predicted_ratio
stats datafile using ($19 + $20) nooutput
flagged = STATS_max > 0 ? 'still disturbed: ratio not to be trusted' : ''
stats datafile using 9 nooutput
ckpt_lo = STATS_min
stats datafile using 10 nooutput
total_lo = STATS_min
stats datafile using 14 nooutput
top = STATS_max
stats datafile using 13 nooutput
bottom = STATS_min < 0.9 ? STATS_min * 0.95 : 0.9
stats datafile using 3 nooutput
ops_hi = STATS_max
msm(c) = strcol(1) eq 'msm' ? column(c) : 1/0
chen(c) = strcol(1) eq 'chen' ? column(c) : 1/0
full(c) = strcol(1) eq 'full' ? column(c) : 1/0
# MSM at 100% sits on full BPTT: its label would cover full's marker
lab(c) = strcol(1) eq 'msm' && strcol(2) ne '100%' ? column(c) : 1/0
# against forward ops the budgets from 5% to 20% crowd near 1.9: 7-15% unlabelled
lab3(c) = strcol(2) eq '7%' || strcol(2) eq '10%' || strcol(2) eq '15%' ? 1/0 : lab(c)
blue = '#1f77b4'; red = '#d62728'; green = '#2ca02c'; grey = '#555555'; orange = '#ff7f0e'
set multiplot layout 1,3 title sprintf("Measured: one training iteration of an LSTM, t = %d, hidden %d, batch %d, input 64\nbars: min to max over the rounds; dashed: the time the plan's forward ops predict (each forward op above t costs one of full BPTT's measured forward steps)", T, H, B) font 'sans,12'
set grid
set key top right spacing 1.15
set yrange [bottom:(top > 1.6 ? top * 1.05 : 1.7)]
set ylabel 'time per iteration / full BPTT'
set logscale x
set xrange [ckpt_lo / 1.6:1.6]
set xlabel 'checkpoint memory / full BPTT (log)'
set title 'Checkpoint memory (the paper''s measure)'
plot datafile using (msm(9)):24 with linespoints dt 2 lw 2 pt 6 ps 1 lc rgb grey title 'predicted from forward ops', \
     '' using (msm(9)):11 with lines lw 2 lc rgb blue notitle, \
     '' using (msm(9)):11:13:14 with yerrorbars pt 7 ps 1.1 lc rgb blue title 'MSM, budgets 1%..100%', \
     '' using (lab(9)):11:2 with labels offset char 0.9,0.8 left font 'sans,9' tc rgb blue notitle, \
     '' using (chen(9)):11:13:14 with yerrorbars pt 5 ps 1.6 lc rgb red title 'Chen sqrt(t)', \
     '' using (full(9)):11:13:14 with yerrorbars pt 9 ps 2 lc rgb green title 'full BPTT (its own runs'' spread)', \
     '' using ($19 + $20 > 0 ? column(9) : 1/0):11 with points pt 6 ps 3 lw 2 lc rgb orange title flagged, \
     '+' using (0.05):(1.33) every ::0::0 with points pt 6 ps 2.2 lw 2 lc rgb 'black' title 'paper: 95% saved at 1.33x'
set xrange [total_lo / 1.3:1.3]
set xlabel 'total tracked memory / full BPTT''s total (log)'
set title 'Everything the run holds (checkpoints, working set, parameters, data)'
plot datafile using (msm(10)):24 with linespoints dt 2 lw 2 pt 6 ps 1 lc rgb grey title 'predicted from forward ops', \
     '' using (msm(10)):11 with lines lw 2 lc rgb blue notitle, \
     '' using (msm(10)):11:13:14 with yerrorbars pt 7 ps 1.1 lc rgb blue title 'MSM', \
     '' using (lab(10)):11:2 with labels offset char 0.9,0.8 left font 'sans,9' tc rgb blue notitle, \
     '' using (chen(10)):11:13:14 with yerrorbars pt 5 ps 1.6 lc rgb red title 'Chen sqrt(t)', \
     '' using (full(10)):11:13:14 with yerrorbars pt 9 ps 2 lc rgb green title 'full BPTT', \
     '' using ($19 + $20 > 0 ? column(10) : 1/0):11 with points pt 6 ps 3 lw 2 lc rgb orange title flagged
unset logscale x
set xrange [0.95:ops_hi + 0.1]
set xlabel 'forward ops per step (the plan''s; 1 = no recomputation)'
set title 'Time follows the plan''s forward ops'
set key top left
plot datafile using (msm(3)):24 with lines dt 2 lw 2 lc rgb grey title 'predicted: 1 + (ops - 1) t f / S', \
     '' using (msm(3)):11:13:14 with yerrorbars pt 7 ps 1.1 lc rgb blue title 'MSM', \
     '' using (lab3(3)):11:2 with labels offset char 0.9,-0.8 left font 'sans,9' tc rgb blue notitle, \
     '' using (chen(3)):11:13:14 with yerrorbars pt 5 ps 1.6 lc rgb red title 'Chen sqrt(t)', \
     '' using (full(3)):11:13:14 with yerrorbars pt 9 ps 2 lc rgb green title 'full BPTT', \
     '' using ($19 + $20 > 0 ? column(3) : 1/0):11 with points pt 6 ps 3 lw 2 lc rgb orange title flagged
unset multiplot
