# fig3-headline.gp: time per iteration against memory, both relative to full
# BPTT, measured on an LSTM (data from experiments/fig3-headline).  Each
# measured ratio is the median over the rounds of the sweep, its bar the
# rounds' min to max; a point whose kept run, or the full BPTT runs it is
# measured against, stayed disturbed is ringed (not to be trusted).
# Variables: datafile, outfile, term (png or svg), T, H.
if (term eq 'png') set terminal pngcairo size 1200,520 font 'sans,11'
if (term eq 'svg') set terminal svg size 1200,520 font 'sans,11'
set output outfile
set datafile separator ','
# columns: 9 checkpoint_fraction, 10 total_fraction, 11 time_ratio (median),
# 13/14 time_ratio_min/max, 19 disturbed, 20 ref_disturbed
stats datafile using ($19 + $20) nooutput
flagged = STATS_max > 0 ? 'still disturbed: ratio not to be trusted' : ''
set multiplot layout 1,2 title sprintf('Measured: one training iteration of an LSTM, t = %d, hidden %d, batch 32 (bars: min to max over the rounds)', T, H)
set logscale x
set grid
set key top right
set yrange [0.8:*]
set ylabel 'time per iteration / full BPTT'
set xlabel 'checkpoint memory / full BPTT (log)'
set title 'Checkpoint memory (the paper''s measure)'
cx = 9
plot datafile using (strcol(1) eq 'msm' ? column(cx) : 1/0):11 with lines lc rgb '#1f77b4' notitle, \
     '' using (strcol(1) eq 'msm' ? column(cx) : 1/0):11:13:14 with yerrorbars pt 7 lc rgb '#1f77b4' title 'MSM, budgets 1%..100%', \
     '' using (strcol(1) eq 'chen' ? column(cx) : 1/0):11:13:14 with yerrorbars pt 5 ps 1.6 lc rgb '#d62728' title 'Chen sqrt(t)', \
     '' using (strcol(1) eq 'full' ? column(cx) : 1/0):11 with points pt 9 ps 1.8 lc rgb '#2ca02c' title 'full BPTT', \
     '' using ($19 + $20 > 0 ? column(cx) : 1/0):11 with points pt 6 ps 3 lw 2 lc rgb '#ff7f0e' title flagged, \
     '+' using (0.05):(1.33) every ::0::0 with points pt 6 ps 2 lw 2 lc rgb 'black' title 'paper: 95% saved at 1.33x'
set xlabel 'total tracked memory / full BPTT''s total (log)'
set title 'Everything the run holds (checkpoints, working set, parameters, data)'
cx = 10
plot datafile using (strcol(1) eq 'msm' ? column(cx) : 1/0):11 with lines lc rgb '#1f77b4' notitle, \
     '' using (strcol(1) eq 'msm' ? column(cx) : 1/0):11:13:14 with yerrorbars pt 7 lc rgb '#1f77b4' title 'MSM, budgets 1%..100%', \
     '' using (strcol(1) eq 'chen' ? column(cx) : 1/0):11:13:14 with yerrorbars pt 5 ps 1.6 lc rgb '#d62728' title 'Chen sqrt(t)', \
     '' using (strcol(1) eq 'full' ? column(cx) : 1/0):11 with points pt 9 ps 1.8 lc rgb '#2ca02c' title 'full BPTT', \
     '' using ($19 + $20 > 0 ? column(cx) : 1/0):11 with points pt 6 ps 3 lw 2 lc rgb '#ff7f0e' title flagged
unset multiplot
