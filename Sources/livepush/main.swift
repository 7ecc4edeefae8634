print("livepush")
