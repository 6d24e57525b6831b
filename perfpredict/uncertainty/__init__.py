"""uncertainty"""
