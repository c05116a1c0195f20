"""Reports (DESIGN §17): provider SLA evidence (`monitor.reports.sla`) and the weekly report
(`monitor.reports.weekly`), rendered as HTML, PDF, JSON or CSV."""
