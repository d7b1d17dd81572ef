# fig3-headline.gp: time per iteration against memory, both relative to full
# BPTT, measured on an LSTM (data from experiments/fig3-headline).
# Variables: datafile, outfile, term (png or svg), T, H.
if (term eq 'png') set terminal pngcairo size 1200,520 font 'sans,11'
if (term eq 'svg') set terminal svg size 1200,520 font 'sans,11'
set output outfile
set datafile separator ','
set multiplot layout 1,2 title sprintf('Measured: one training iteration of an LSTM, t = %d, hidden %d, batch 32', T, H)
set logscale x
set grid
set key top right
set yrange [0.8:*]
set ylabel 'time per iteration / full BPTT'
set xlabel 'checkpoint memory / full BPTT (log)'
set title 'Checkpoint memory (the paper''s measure)'
plot datafile using (strcol(1) eq 'msm' ? $9 : 1/0):11 with linespoints pt 7 lc rgb '#1f77b4' title 'MSM, budgets 1%..100%', \
     '' using (strcol(1) eq 'chen' ? $9 : 1/0):11 with points pt 5 ps 1.6 lc rgb '#d62728' title 'Chen sqrt(t)', \
     '' using (strcol(1) eq 'full' ? $9 : 1/0):11 with points pt 9 ps 1.8 lc rgb '#2ca02c' title 'full BPTT', \
     '+' using (0.05):(1.33) every ::0::0 with points pt 6 ps 2 lw 2 lc rgb 'black' title 'paper: 95% saved at 1.33x'
set xlabel 'total tracked memory / full BPTT''s total (log)'
set title 'Everything the run holds (checkpoints, working set, parameters, data)'
plot datafile using (strcol(1) eq 'msm' ? $10 : 1/0):11 with linespoints pt 7 lc rgb '#1f77b4' title 'MSM, budgets 1%..100%', \
     '' using (strcol(1) eq 'chen' ? $10 : 1/0):11 with points pt 5 ps 1.6 lc rgb '#d62728' title 'Chen sqrt(t)', \
     '' using (strcol(1) eq 'full' ? $10 : 1/0):11 with points pt 9 ps 1.8 lc rgb '#2ca02c' title 'full BPTT'
unset multiplot
